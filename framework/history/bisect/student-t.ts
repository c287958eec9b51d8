// Student's t distribution: the critical value a mean must pass when the noise it is measured
// against is itself estimated from a few repeats (with 4 degrees of freedom the one-sided 0.1 %
// point is 7.2 standard errors, not the normal's 3.1). The CDF goes through the regularized
// incomplete beta function (continued fraction, modified Lentz), the quantile by bisection on it.

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 significant digits). */
function lnGamma(x: number): number {
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let sum = c[0];
  for (let k = 1; k < 9; k++) sum += c[k] / (z + k);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** The continued fraction of the incomplete beta function (converges for x < (a + 1) / (a + b + 2)). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  d = Math.abs(d) < tiny ? 1 / tiny : 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    for (const step of [(m * (b - m) * x) / ((a + m2 - 1) * (a + m2)), (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))]) {
      d = 1 + step * d;
      d = Math.abs(d) < tiny ? 1 / tiny : 1 / d;
      c = 1 + step / c;
      c = Math.abs(c) < tiny ? tiny : c;
      h *= d * c;
    }
    if (Math.abs(d * c - 1) < 1e-14) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b;
}

/** P(T <= t) for Student's t with `freedom` degrees of freedom. */
export function studentTCdf(t: number, freedom: number): number {
  const tail = 0.5 * incompleteBeta(freedom / (freedom + t * t), freedom / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** The t a one-sided test at level `alpha` must pass: P(T > t) = alpha. */
export function studentTCritical(alpha: number, freedom: number): number {
  let lo = 0;
  let hi = 1;
  while (1 - studentTCdf(hi, freedom) > alpha) hi *= 2;
  for (let k = 0; k < 100 && hi - lo > 1e-10; k++) {
    const mid = (lo + hi) / 2;
    if (1 - studentTCdf(mid, freedom) > alpha) lo = mid;
    else hi = mid;
  }
  return hi;
}
