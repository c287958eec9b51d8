// Where CUDA's libraries are looked for: by soname first (the loader's path), then inside CUDA
// installs (CUDA_HOME, CUDA_PATH, /usr/local/cuda), which often are not on the loader's path.

/** The sonames themselves, then each of the first three inside every CUDA install's library folders. */
export function cudaLibraryCandidates(sonames: readonly string[]): string[] {
  const homes = [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda'].filter((h): h is string => !!h);
  const dirs = homes.flatMap((home) => ['lib64', 'targets/x86_64-linux/lib', 'targets/sbsa-linux/lib'].map((d) => `${home}/${d}`));
  return [...sonames, ...dirs.flatMap((dir) => sonames.slice(0, 3).map((so) => `${dir}/${so}`))];
}
