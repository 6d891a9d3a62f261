// --inject --image-volume: the istio-job-run image itself mounted read-only as an image volume (Kubernetes'
// volumes[].image), so nothing is copied per pod: no init container, no emptyDir. The whole image is mounted,
// not a subPath of it (subPath into an image volume needs Kubernetes 1.33), so the wrapper is the image's own
// executable below the mount.

import { PROGRAM } from '../../bundle/self.ts';
import type { Value } from '../yaml/edits.ts';

/** Where docker/Dockerfile puts the bundle in the image (its ADD and ENTRYPOINT say the same). */
export const IMAGE_BUNDLE_DIR = `/opt/${PROGRAM}`;

/** The executable, with the image volume mounted at MOUNT: the image's path below it. */
export const imageVolumeWrapper = (mount: string): string => `${mount}${IMAGE_BUNDLE_DIR}/${PROGRAM}`;

/** The pod's volume: the image, pulled once per node like a container's image. */
export const imageVolume = (name: string, image: string): Value => ({ name, image: { reference: image, pullPolicy: 'IfNotPresent' } });
