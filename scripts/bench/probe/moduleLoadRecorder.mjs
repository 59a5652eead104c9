// Records every module Node loads into the file named by BC_MODULE_LOG, one URL a line (`--import` this file after
// `tsx`). The load hook runs on Node's hooks thread, so it sees what Node itself loads, whatever the loader chain.
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
let file;
export function initialize(data) { file = data.file; }
export async function load(url, context, nextLoad) {
  appendFileSync(file, url + '\\n');
  return nextLoad(url, context);
}
`;
if (process.env.BC_MODULE_LOG) {
  register(`data:text/javascript,${encodeURIComponent(hooks)}`, { data: { file: process.env.BC_MODULE_LOG } });
}
