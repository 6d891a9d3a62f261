// --check's rules of the pod's sidecars (their quit endpoints, the annotations and flags that switch them, the
// restart policy and the Job's failure policy), from manifests that trip each rule and manifests that must not.

import { CASES } from './pod.cases.ts';
import { checkCases } from './cases.ts';

checkCases('pod', CASES);
