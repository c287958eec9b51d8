// The report's file name, apart from the renderer: the run's start checks OUTPUT_PATH's files
// (suite/output-path.ts) and needs the name, not the HTML and plot code behind it.
export const REPORT_FILE = 'report.html';
