// Random prompts without a tokenizer: token ids (--random-ids, --nv-sa: exactly N tokens), or N
// space-separated words drawn from a fixed vocabulary of common lower-case English words, each a
// single token (with its leading space) in the usual BPE vocabularies (GPT-2/cl100k, Llama,
// DeepSeek), so about N tokens; the exact count is the server's usage.prompt_tokens when given.
import { seededRandom } from '../../common/random.ts';

const vocabulary = [...new Set((
  'the of and to in is was for on that with as by at from his her it an be are this which or had ' +
  'not but have were one all their they been has more who when there would can after new other ' +
  'first also two into time up out only some its over most made many these such then year may ' +
  'people what about like than used them city where between world through during three work part ' +
  'state later life known under could well while both name until same much school back each since ' +
  'him high family name along water small house long found began area early great before war day ' +
  'left end those second own line game country based called around film team old way home best ' +
  'four still days take place music did make side took set number group public book five season ' +
  'near government court early last power even following against war played being series very ' +
  'should good men great land local help form show play sea light open run power order small king ' +
  'east west north south river road next field club band story point body head hand light room ' +
  'color black white red green blue gold stone fire air earth rain snow wind tree bird fish horse ' +
  'dog cat food bread milk tea wine glass paper letter word page note song dance art voice sound'
).split(' '))];

export interface BenchPrompt {
  /** The prompt as text (random words), or '' when the prompt is token ids. */
  text: string;
  /** The prompt as token ids (--random-ids / --nv-sa), sent as the completions `prompt` array. */
  tokenIds?: number[];
  /** Words in text (or ids): the prompt length used when the server reports no usage. */
  words: number;
  /** max_tokens of this request. */
  outputLen: number;
}

/**
 * How --random-range-ratio r draws lengths:
 * - 'symmetric' (TensorRT-LLM's benchmark_serving): uniform in [len * (1 - r), len * (1 + r)];
 * - 'sa' (the SemiAnalysis bench_serving that upstream's run_benchmark_nv_sa.sh clones):
 *   np.random.randint(int(len * r), len + 1), i.e. uniform in [floor(len * r), len], r in [0, 1].
 * Both at least 1 (a 0-token prompt or max_tokens 0 is not a valid request).
 */
export type RangeMode = 'symmetric' | 'sa';

export interface PromptPlan {
  count: number;
  inputLen: number;
  outputLen: number;
  rangeRatio: number;
  /** Default 'symmetric'. */
  rangeMode?: RangeMode;
  /** Token-id prompts from a vocabulary of this many ids instead of words (no tokenizer needed). */
  tokenIdVocab?: number;
  seed: number;
}

function drawLength(random: () => number, len: number, ratio: number, mode: RangeMode): number {
  let low: number;
  let high: number;
  if (mode === 'sa') {
    low = Math.floor(len * ratio);
    high = len;
  } else {
    if (ratio === 0) return len;
    low = Math.floor(len * (1 - ratio));
    high = Math.floor(len * (1 + ratio));
  }
  low = Math.max(1, low);
  high = Math.max(low, high);
  return low + Math.floor(random() * (high - low + 1));
}

/** The prompts of one run; the same plan always gives the same prompts. */
export function generatePrompts(plan: PromptPlan): BenchPrompt[] {
  const random = seededRandom(plan.seed);
  const mode = plan.rangeMode ?? 'symmetric';
  const prompts: BenchPrompt[] = [];
  for (let i = 0; i < plan.count; i++) {
    const words = drawLength(random, plan.inputLen, plan.rangeRatio, mode);
    const outputLen = drawLength(random, plan.outputLen, plan.rangeRatio, mode);
    if (plan.tokenIdVocab !== undefined) {
      // As the SA client: consecutive ids from a random offset, (offset + i + j) mod vocab.
      const vocab = plan.tokenIdVocab;
      const offset = Math.floor(random() * vocab);
      const ids = Array.from({ length: words }, (_, j) => (offset + i + j) % vocab);
      prompts.push({ text: '', tokenIds: ids, words, outputLen });
      continue;
    }
    const picked = new Array<string>(words);
    for (let w = 0; w < words; w++) picked[w] = vocabulary[Math.floor(random() * vocabulary.length)];
    prompts.push({ text: picked.join(' '), words, outputLen });
  }
  return prompts;
}
