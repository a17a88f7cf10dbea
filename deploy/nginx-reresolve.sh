#!/bin/sh
# Runs nginx on deploy/nginx.conf with the replicas' current addresses, and reloads it
# whenever one changes.  nginx 1.22 (Debian's, the stand-in's) resolves upstream
# server names once, at start: a replica that compose starts again at a new address
# would never get traffic, and one that is gone would stop nginx from starting at all.
# So every RERESOLVE_SECONDS this script looks the names up itself and renders a copy
# of the config with addresses: a name that resolves gets its first IPv4 address, a
# name that does not (its container is stopped) becomes a "down" server that nothing
# is sent to.  On a change it checks the copy (nginx -t) and sends nginx SIGHUP: new
# workers take new connections at once, old ones finish the sockets they hold.
#   usage: nginx-reresolve.sh [nginx arguments, e.g. -g 'daemon off;']
# Settings (environment): NGINX_CONF_IN (default /etc/nginx/nginx.conf), NGINX_CONF
# (the rendered copy, default /tmp/nginx.rendered.conf), NGINX (default nginx),
# RESOLVE (a command given a name, printing its addresses first on each line; default
# "getent ahostsv4"), RERESOLVE_SECONDS (default 1).
set -u
conf_in=${NGINX_CONF_IN:-/etc/nginx/nginx.conf}
conf=${NGINX_CONF:-/tmp/nginx.rendered.conf}
nginx=${NGINX:-nginx}
resolve=${RESOLVE:-getent ahostsv4}
interval=${RERESOLVE_SECONDS:-1}

# "name address" for every upstream server name of the config ("name -" if unknown).
lookup() {
  for name in $(sed -n 's/^[[:space:]]*server[[:space:]]\{1,\}\([A-Za-z][A-Za-z0-9_.-]*\):[0-9]\{1,\}.*/\1/p' "$conf_in" | sort -u); do
    address=$($resolve "$name" 2>/dev/null | awk 'NR == 1 { print $1 }')
    echo "$name ${address:--}"
  done
}

# The config with each "server NAME:PORT" replaced by its address (or a down server).
render() {
  script=""
  while read -r name address; do
    if [ "$address" = "-" ]; then
      script="$script s/server[[:space:]]\{1,\}$name:[0-9]\{1,\}/server 127.0.0.1:9 down/;"
    else
      script="$script s/server[[:space:]]\{1,\}$name:\([0-9]\{1,\}\)/server $address:\1/;"
    fi
  done <<EOT
$1
EOT
  sed "$script" "$conf_in"
}

seen=$(lookup)
render "$seen" >"$conf" || exit 1
"$nginx" -c "$conf" "$@" &
pid=$!
# docker stop sends the image's STOPSIGNAL (SIGQUIT for nginx) to this script, PID 1.
trap 'kill -QUIT "$pid" 2>/dev/null' QUIT TERM INT
while kill -0 "$pid" 2>/dev/null; do
  sleep "$interval" &
  wait $! 2>/dev/null
  now=$(lookup)
  [ "$now" = "$seen" ] && continue
  render "$now" >"$conf.new" || continue
  if "$nginx" -t -q -c "$conf.new" "$@"; then
    mv "$conf.new" "$conf" && kill -HUP "$pid" && seen=$now
    echo "nginx-reresolve: replicas now at: $(echo "$now" | tr '\n' ' ')" >&2
  else
    echo "nginx-reresolve: the config for $(echo "$now" | tr '\n' ' ')fails nginx -t; kept the last" >&2
  fi
done
wait "$pid"
