# Sourced by scripts/run_example.sh and scripts/test.sh:
#   kscope_install_packages GROUP...   installs the packages of scripts/debian-packages.txt in those
#                                      groups that are not installed yet
# As root on Debian/Ubuntu (apt-get) it installs them; KSCOPE_SKIP_APT=1, another user or another
# system only names what is missing, and the build and the tests go on with what is installed (a
# test whose tool is missing says so and is skipped).

kscope_install_packages() {
  local list groups=" $* " package missing=()
  list="$(dirname "${BASH_SOURCE[0]}")/debian-packages.txt"
  command -v dpkg-query >/dev/null || return 0  # not a Debian system: nothing to ask apt about
  for package in $(awk -v groups="$groups" '!/^#/ && NF >= 2 && index(groups, " " $2 " ") { print $1 }' "$list"); do
    dpkg-query -W -f='${Status}\n' "$package" 2>/dev/null | grep -q ' installed$' || missing+=("$package")
  done
  (( ${#missing[@]} )) || return 0
  if [ "${KSCOPE_SKIP_APT:-0}" = 1 ] || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "[kscope] not installed: ${missing[*]} (as root: apt-get install ${missing[*]}); going on without them" >&2
    return 0
  fi
  echo "[kscope] installing ${#missing[@]} Debian packages (scripts/debian-packages.txt): ${missing[*]}" >&2
  if ! { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    echo "[kscope] apt-get could not install them; going on with what is installed" >&2
  fi
}

# kscope_package_for WHAT: the package of scripts/debian-packages.txt that provides WHAT
# (import:NAME or program:NAME, as its third column says).
kscope_package_for() {
  awk -v what="$1" '!/^#/ { for (i = 3; i <= NF; i++) if ($i == what) { print $1; exit } }' \
    "$(dirname "${BASH_SOURCE[0]}")/debian-packages.txt"
}

# kscope_missing_packages PYTHON WHAT...: the packages providing those WHATs that PYTHON cannot
# import or that are not on PATH, on one line.
kscope_missing_packages() {
  local python=$1 what missing=()
  shift
  for what in "$@"; do
    case $what in
      import:*) "$python" -c "import ${what#import:}" 2>/dev/null && continue ;;
      program:*) command -v "${what#program:}" >/dev/null && continue ;;
    esac
    missing+=("$(kscope_package_for "$what")")
  done
  echo "${missing[*]}" | tr ' ' '\n' | awk 'NF && !seen[$0]++' | paste -sd' '
}
