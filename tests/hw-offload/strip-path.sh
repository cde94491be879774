# Sourced by this directory's wrappers: takes this directory out of PATH,
# however PATH spells it ("x/../tests/hw-offload/" from an out-of-tree
# build), so that a wrapper runs OVS's own command rather than itself
# for ever.
here=$(cd "$(dirname "$0")" && pwd -P)
path=
IFS=:
for dir in $PATH; do
    [ "$(cd "$dir" 2>/dev/null && pwd -P)" = "$here" ] && continue
    path=${path:+$path:}$dir
done
unset IFS
PATH=$path
export PATH
