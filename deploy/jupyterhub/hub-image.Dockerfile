# The hub's image for a course on one shared Redis: Zero to JupyterHub's own hub image with
# echomq-viz added, whose echomq_viz.redis_side.acl makes a Redis user per student in config.yaml's
# pre_spawn_hook. Use the k8s-hub tag of your chart's version. Build it from the root of a clean clone:
#
#   docker build -f deploy/jupyterhub/hub-image.Dockerfile -t registry.example.org/echomq-viz-hub:0.1.0 .
#   docker push registry.example.org/echomq-viz-hub:0.1.0
ARG HUB_IMAGE=quay.io/jupyterhub/k8s-hub:4.0.0
FROM ${HUB_IMAGE}
COPY --chown=1000:1000 . /tmp/echomq-viz
# No extras: the hook needs only the package and redis-py.
RUN pip install --no-cache-dir /tmp/echomq-viz && rm -rf /tmp/echomq-viz
