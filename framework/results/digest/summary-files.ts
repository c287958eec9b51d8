// The digest's file names, apart from the code that writes them: the run's facts and the runs'
// index read summary.json without building a digest.
export const SUMMARY_MD_FILE = 'summary.md';
export const SUMMARY_JSON_FILE = 'summary.json';
