# An example job image with istio-job-run as its ENTRYPOINT.
# Build context: the repository root, after `npm run build` (dist/istio-job-run).
FROM debian:bookworm-slim
COPY dist/istio-job-run /usr/local/bin/istio-job-run
COPY docker/example-task.sh /app/task.sh
ENTRYPOINT ["/usr/local/bin/istio-job-run", "--"]
CMD ["/app/task.sh"]
