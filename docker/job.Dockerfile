# An example job image with istio-job-run as its ENTRYPOINT (docker/k8s/job.yaml). The base is Alpine
# (musl, no glibc) on purpose: the portable bundle needs nothing from the image.
#
#   npm run release
#   docker build -f docker/job.Dockerfile --build-arg VERSION=0.1.0 --build-arg ARCH=x64 -t example-job:0.1.0 .
FROM alpine:3.20
ARG VERSION
ARG ARCH=x64
ADD dist/release/istio-job-run-${VERSION}-linux-${ARCH}.tar.gz /usr/local/bin/
COPY docker/example-task.sh /app/task.sh
ENTRYPOINT ["/usr/local/bin/istio-job-run", "--"]
CMD ["/app/task.sh"]
