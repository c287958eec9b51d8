// Where runs are kept under OUTPUT_PATH, named once: `disagg-bench run` writes each run into
// runs/<run id>/ (framework/run/run-folder.ts) and the index of runs links into it. A module of its
// own, so the run command does not load the report's page to know a folder's name.
export const RUNS_FOLDER = 'runs';
export const INDEX_FILE = 'index.html';
