// --check's rules of the job's script (the status it ends with, when its quit runs, the shell's own errors), from
// manifests that trip each rule and manifests that must not.

import { CASES } from './script.cases.ts';
import { checkCases } from './cases.ts';

checkCases('script', CASES);
