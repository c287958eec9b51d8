// Node hosts in the files a job writes before it knows its nodes (the router's config,
// allocations.json): `<nodeN>`, the N-th node of the allocation, which job.sh replaces with the
// node's address before it starts the router.

export function nodePlaceholder(index: number): string {
  return `<node${index}>`;
}
