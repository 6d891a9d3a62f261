#!/bin/sh
# The sample job of docker/job.Dockerfile: says what it sees and succeeds.
echo "task: running as pid $$ (parent $PPID) in $(hostname)"
echo "task: done"
