#!/bin/sh
# The image's entry point (run by tini): `api` (default), `worker`, `migrate`, or `cli ...` (mail).
# `exec` makes node the process tini signals, so SIGTERM reaches the app's graceful shutdown.
set -eu
app="${APP:?APP is set by the image}"
command="${1:-api}"
[ "$#" -gt 0 ] && shift
case "$command" in
  api) exec node "apps/$app/dist/main.js" "$@" ;;
  worker) exec node "apps/$app/dist/worker.js" "$@" ;;
  migrate) exec node "apps/$app/dist/cli/migrate.js" "$@" ;;
  cli)
    if [ ! -f "apps/$app/dist/cli/mail-cli.js" ]; then
      echo "entrypoint: $app has no CLI" >&2
      exit 64
    fi
    exec node "apps/$app/dist/cli/mail-cli.js" "$@" ;;
  *)
    echo "entrypoint: unknown command '$command' (api, worker, migrate or cli)" >&2
    exit 64 ;;
esac
