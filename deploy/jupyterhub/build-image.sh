#!/bin/sh
# The single-user image of config.yaml, built from this repository with repo2docker (it reads
# environment.yml), then pushed where the cluster pulls from. Needs Docker and
# `pip install jupyter-repo2docker`. The repository goes to /srv/echomq-viz, outside the home
# folder, where each student's volume is mounted.
set -eu
IMAGE="${IMAGE:-registry.example.org/echomq-viz:0.1.0}"
cd "$(dirname "$0")/../.."
jupyter-repo2docker --no-run --user-id 1000 --user-name jovyan --target-repo-dir /srv/echomq-viz --image-name "$IMAGE" .
docker push "$IMAGE"
