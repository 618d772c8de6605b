# The browser playground; included from the top-level Makefile.
#   make playground        build it and serve it on http://127.0.0.1:8457/
#   make playground-test   the browser tests (Playwright driving Debian's chromium)
# The site is target/playground/site: index.html, app.js, style.css, sw.js,
# the wasm-bindgen glue playground.js and the optimized playground_bg.wasm.

PG_TARGET := wasm32-unknown-unknown
PG_PORT := 8457
PG_OUT := target/playground
PG_SITE := $(PG_OUT)/site
PG_WASM := $(or $(CARGO_TARGET_DIR),target)/$(PG_TARGET)/release/playground.wasm
# The wasm-bindgen CLI must be exactly the version of the crate in Cargo.lock.
PG_BINDGEN_VERSION = $(shell awk '/^name = "wasm-bindgen"$$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
PG_BINDGEN := wasm-bindgen
PG_CHROMIUM := /usr/bin/chromium

.PHONY: playground playground-build playground-setup playground-browser playground-test

playground-setup: setup
	@rustup target list --installed | grep -qx $(PG_TARGET) || rustup target add $(PG_TARGET)
	@want=$(PG_BINDGEN_VERSION); have=$$($(PG_BINDGEN) --version 2>/dev/null | awk '{print $$2}' || true); \
	if [ "$$have" != "$$want" ]; then \
		echo "installing wasm-bindgen-cli $$want (found: $${have:-none})"; \
		cargo install wasm-bindgen-cli --version "$$want" --locked; \
	fi
	@test -d node_modules/playwright-core || npm ci --no-audit --no-fund

playground-build: playground-setup
	cargo build --release --target $(PG_TARGET) -p playground
	@rm -rf $(PG_OUT)/bindgen && mkdir -p $(PG_SITE)
	$(PG_BINDGEN) --target web --no-typescript --out-dir $(PG_OUT)/bindgen $(PG_WASM)
	$(WASM_OPT) $(WASM_OPT_FLAGS) $(PG_OUT)/bindgen/playground_bg.wasm -o $(PG_SITE)/playground_bg.wasm
	@cp $(PG_OUT)/bindgen/playground.js playground/web/index.html playground/web/app.js \
		playground/web/style.css playground/web/sw.js $(PG_SITE)/
	@total=0; for f in $(PG_SITE)/*; do \
		gz=$$(gzip -9c "$$f" | wc -c); total=$$((total + gz)); \
		printf '%-40s %9d bytes (gzip %d)\n' "$$f" $$(stat -c %s "$$f") $$gz; \
	done; printf 'playground page weight: %d bytes gzip (budget 1572864)\n' $$total; \
	test $$total -le 1572864

playground: playground-build
	node playground/serve.mjs --port $(PG_PORT) $(PG_SITE)

playground-browser:
	@test -x $(PG_CHROMIUM) || apt-get install -y chromium || (apt-get update && apt-get install -y chromium)

playground-test: playground-build playground-browser
	node --test --test-concurrency=1 playground/tests/
