// --check's rule of a pod whose job nothing stops the sidecar for (unwrapped), each injector's values, from
// manifests that trip it and manifests that must not.

import { CASES } from './unwrapped.cases.ts';
import { checkCases } from './cases.ts';

checkCases('unwrapped', CASES);
