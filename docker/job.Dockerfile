# An example job image with istio-job-run as its ENTRYPOINT (docker/k8s/job.yaml), copied from the
# istio-job-run image (docker/Dockerfile): the way tini, scuttle and linkerd-await are put into images. The
# base is Alpine (musl, no glibc) on purpose: the portable bundle needs nothing from the image.
#
#   npm run release
#   podman build -f docker/Dockerfile --build-arg VERSION=0.1.0 --build-arg ARCH=x64 -t istio-job-run:0.1.0 .
#   podman build -f docker/job.Dockerfile --build-arg VERSION=0.1.0 -t example-job:0.1.0 .
ARG VERSION=0.1.0
FROM istio-job-run:${VERSION} AS istio-job-run
FROM alpine:3.20
COPY --from=istio-job-run /opt/istio-job-run/ /usr/local/bin/
COPY docker/example-task.sh /app/task.sh
# Alpine's default user is root; kubelet refuses runAsNonRoot for a root image user.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/istio-job-run", "--"]
CMD ["/app/task.sh"]
