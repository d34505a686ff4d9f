# Shared by .ci/docs, .ci/api and .ci/snippets (source it; it defines, it runs nothing).
#
# build_library_modules: builds the module of every library product that Package.swift
# declares (so a new product is documented, API-checked and snippet-checked without touching
# the scripts) and sets
#   modules     the module names, in Package.swift's order
#   module_dir  where their .swiftmodule files are (debug build)
#   triple      the target triple of this toolchain
#   sdk_args    -sdk <path> on Apple platforms, empty elsewhere
# Every target is Swift, so a module's .swiftmodule in module_dir is all a tool needs to load it.
build_library_modules() {
  modules=()
  local name
  for name in $(swift package dump-package | python3 -c '
import json, sys
names = []
for product in json.load(sys.stdin)["products"]:
    if "library" in product["type"]:
        names += [target for target in product["targets"] if target not in names]
print(" ".join(names))'); do
    modules+=("$name")
  done
  if [ "${#modules[@]}" -eq 0 ]; then
    echo "no library product found (swift package dump-package failed?)" >&2
    return 1
  fi
  for name in "${modules[@]}"; do
    swift build --target "$name" >/dev/null
  done
  local bin
  bin=$(swift build --show-bin-path)
  module_dir="$bin/Modules"
  [ -d "$module_dir" ] || module_dir="$bin"
  triple=$(swiftc -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
  sdk_args=()
  if command -v xcrun >/dev/null; then sdk_args=(-sdk "$(xcrun --show-sdk-path)"); fi
}
