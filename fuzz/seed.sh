#!/usr/bin/env bash
# Write the seed corpus of every fuzz target into DIR/<target>/ (default: fuzz/corpus), from the
# recorded provider streams (tests/fixtures/wire), the JSON test suite
# (rust/core/tests/json-test-suite) and the canonical examples. Nothing here is committed: the
# seeds are made again from the fixtures whenever `make fuzz` or `make fuzz-smoke` runs.
#
# Most targets read a header before the body (see fuzz/src/lib.rs): a mode byte, then the
# chunk sizes to split the body at. Seeds get mode 0 (default limits) and chunks of 5 and 11
# bytes, so the split paths run from the first input on.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-fuzz/corpus}
wire=tests/fixtures/wire
suite=rust/core/tests/json-test-suite/test_parsing

# seed TARGET FILE...: each file, with the header, as DIR/TARGET/seed-<name>.
seed() {
    local target=$1
    shift
    mkdir -p "$out/$target"
    for file in "$@"; do
        { printf '\x00\x02\x05\x0b'; cat "$file"; } >"$out/$target/seed-$(basename "$file")"
    done
}

seed sse "$wire"/*/*.sse
seed ndjson "$wire"/ollama/*.ndjson
seed partial_json "$suite"/*.json
seed openai "$wire"/openai/chat-*.sse "$wire"/openai-compat/*.sse
seed openai_responses "$wire"/openai/responses-*.sse
seed anthropic "$wire"/anthropic/*.sse
seed gemini "$wire"/gemini/*.sse
seed ollama "$wire"/ollama/*.ndjson

# transcode: the mode byte names the source (bits 0-2) and the target (bits 3-5), in the order
# of DialectName::ALL (openai, openai-responses, anthropic, gemini, ollama); every recording
# goes to every target.
seed_transcode() {
    local source=$1
    shift
    mkdir -p "$out/transcode"
    for file in "$@"; do
        for target in 0 1 2 3 4; do
            mode=$(printf '\\x%02x' $((source | target << 3)))
            { printf "$mode"'\x02\x05\x0b'; cat "$file"; } >"$out/transcode/seed-$target-$(basename "$file")"
        done
    done
}
seed_transcode 0 "$wire"/openai/chat-*.sse "$wire"/openai-compat/*.sse
seed_transcode 1 "$wire"/openai/responses-*.sse
seed_transcode 2 "$wire"/anthropic/*.sse
seed_transcode 3 "$wire"/gemini/*.sse
seed_transcode 4 "$wire"/ollama/*.ndjson

# The canonical target reads the whole input as a session: no header.
mkdir -p "$out/canonical"
cp python/msgwire/examples/session.json fuzz/seeds/canonical/*.json "$out/canonical/"

# request: `[mode] [source] [body]` (fuzz/src/request.rs). The canonical examples go to every
# dialect (mode bits 0-2) with each option set (bits 6-7); the request fixtures are read first as
# their dialect's body (source bit 7), then converted back to it, and to the next dialect with the
# other options.
requests=tests/fixtures/requests
dialect_index() { # the index of a fixture directory in DialectName::ALL
    case $1 in openai) echo 0;; openai-responses) echo 1;; anthropic) echo 2;; gemini) echo 3;; ollama) echo 4;; esac
}
mkdir -p "$out/request" "$out/request_read" "$out/response"
for file in python/msgwire/examples/session.json fuzz/seeds/canonical/*.json; do
    for target in 0 1 2 3 4; do
        for options in 0 1 2 3; do
            mode=$(printf '\\x%02x' $((target | options << 6)))
            { printf "$mode"'\x00'; cat "$file"; } >"$out/request/seed-$target-$options-$(basename "$file")"
        done
    done
done
for dir in "$requests"/*/; do
    name=$(basename "$dir")
    index=$(dialect_index "$name")
    for file in "$dir"*.json; do
        source=$(printf '\\x%02x' $((index | 0x80)))
        same=$(printf '\\x%02x' "$index")
        next=$(printf '\\x%02x' $(((index + 1) % 5 | 0x50)))
        { printf "$same$source"; cat "$file"; } >"$out/request/seed-$name-$(basename "$file")"
        { printf "$next$source"; cat "$file"; } >"$out/request/seed-$name-next-$(basename "$file")"
        # request_read: `[mode] [body]`, the body of the mode's dialect
        { printf "$same"; cat "$file"; } >"$out/request_read/seed-$name-$(basename "$file")"
    done
done

# response: `[mode] [body]`, a non-streamed response body of the mode's dialect.
for dir in tests/fixtures/responses/*/; do
    name=$(basename "$dir")
    for file in "$dir"*.json; do
        { printf "$(printf '\\x%02x' "$(dialect_index "$name")")"; cat "$file"; } >"$out/response/seed-$name-$(basename "$file")"
    done
done
