# mimoplan: `make demo` shows it working, `make test` proves it.
# A fresh machine needs only Go and gcc: `go` fetches every module itself.

GO       ?= go
BIN      := bin/mimoplan
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
DEMO     ?= layouts/nemotron-vlm-8gpu.yaml
# A count, not a duration: go1.26 fuzzing with -fuzztime DURATION can end in
# "context deadline exceeded" without a crasher (golang/go#75804).
FUZZTIME ?= 100000x
FUZZTIME_SLOW ?= 3000x
# The fuzz targets' short run in make test.
FUZZTIME_TEST ?= 300x
FUZZTIME_TEST_SLOW ?= 30x
# staticcheck, pinned and fetched by `go run`: a fresh machine needs nothing else.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# go-nvml's cgo build prints ~150 lines of deprecated-declaration warnings
# (NVML 13 marks the vGPU calls it still wraps deprecated) in every fresh
# build. -Wno-deprecated-declarations silences that one warning: every other
# warning and every error still print. Go's default is -O2 -g.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: all build demo test test-short lint vet staticcheck fmt-check bench fuzz fuzz-invariants clean compare chromium screenshot

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mimoplan

demo: build
	@echo '$$ mimoplan validate $(DEMO)'
	@./$(BIN) validate $(DEMO)
	@echo
	@echo '$$ mimoplan render $(DEMO)'
	@./$(BIN) render $(DEMO)
	@echo
	@echo '$$ mimoplan render $(DEMO) --rank 5'
	@./$(BIN) render $(DEMO) --rank 5
	@echo
	@echo '$$ mimoplan render $(DEMO) --format html > bin/rankmap.html   # the rank map: open it in a browser'
	@./$(BIN) render $(DEMO) --format html > bin/rankmap.html
	@echo
	@echo '$$ mimoplan estimate layouts/three-module-4node.yaml   # memory per GPU and FLOPs of each model'
	@./$(BIN) estimate layouts/three-module-4node.yaml 2>/dev/null
	@echo
	@echo '$$ mimoplan suggest testdata/suggest/three-1024gpu.yaml --top 2   # plan 1,024 GPUs for two encoders and Llama-3 70B'
	@./$(BIN) suggest testdata/suggest/three-1024gpu.yaml --top 2
	@echo
	@echo '$$ mimoplan validate testdata/demo/broken.yaml   # a layout with mistakes: exit 1'
	@./$(BIN) validate testdata/demo/broken.yaml; echo "exit code $$?"

test: fmt-check lint chromium
	$(GO) test -count=1 ./...
	$(MAKE) fuzz-invariants FUZZTIME=$(FUZZTIME_TEST) FUZZTIME_SLOW=$(FUZZTIME_TEST_SLOW)

# The inner loop: go test -short skips what takes seconds each (preflight's
# payload unittest, the 16-GPU and the larger brute-force comparisons of
# internal/plan); make test (CI) runs everything.
test-short:
	$(GO) test -short ./...

# The rank map's browser tests drive Debian's chromium (headless). As root
# (CI) this installs it when missing; otherwise it says how, and the tests
# skip themselves (but fail in CI, where CI is set).
CHROMIUM ?= /usr/bin/chromium
chromium:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian's chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  elif [ -n "$$CI" ]; then \
	    echo "$(CHROMIUM) is missing and installing it needs root" >&2; exit 1; \
	  else \
	    echo "no $(CHROMIUM): the browser tests will be skipped; 'sudo make chromium' installs it"; \
	  fi; \
	fi

# docs/rankmap-nemotron.png: the rank map page of the demo layout, rank 5
# clicked, taken by the browser test.
screenshot: chromium
	MIMOPLAN_SCREENSHOT=$(CURDIR)/docs/rankmap-nemotron.png $(GO) test -count=1 -run '^TestPageNemotron$$' ./internal/rankmap

lint: vet staticcheck

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) ./...

# Every output of two revisions side by side: make compare BEFORE=main~1 AFTER=.
BEFORE ?= HEAD^
AFTER  ?= .
compare:
	scripts/compare-outputs.sh $(BEFORE) $(AFTER)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/grid ./internal/render ./internal/rankmap ./internal/launch ./internal/plan ./cmd/mimoplan

# Every fuzz target. Each checks invariants, not only "no panic":
# FuzzValidLayout (coverage, partitions, embedding ranks of valid layouts),
# FuzzPlansAgree (render JSON = launch plan topology = preflight plan =
# the grid), FuzzWriters (hostile names and arguments reach a stand-in
# torchrun intact). FuzzWriters runs bash for every input, so it gets
# FUZZTIME_SLOW. make test runs the invariant targets briefly (and go test
# runs every target's seeds).
fuzz: fuzz-invariants
	$(GO) test ./internal/layout -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/layout -run '^$$' -fuzz '^FuzzParseSpecOn$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/validate -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/model -run '^$$' -fuzz '^FuzzCompute$$' -fuzztime $(FUZZTIME)

fuzz-invariants:
	$(GO) test ./internal/validate -run '^$$' -fuzz '^FuzzValidLayout$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cmd/mimoplan -run '^$$' -fuzz '^FuzzPlansAgree$$' -fuzztime $(FUZZTIME_SLOW)
	$(GO) test ./internal/launch -run '^$$' -fuzz '^FuzzWriters$$' -fuzztime $(FUZZTIME_SLOW)
	$(GO) test ./internal/importer -run '^$$' -fuzz '^FuzzMegatronLM$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/importer -run '^$$' -fuzz '^FuzzBridgeEnv$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/estimate -run '^$$' -fuzz '^FuzzEstimate$$' -fuzztime $(FUZZTIME_SLOW)
	$(GO) test ./cmd/mimoplan -run '^$$' -fuzz '^FuzzHumanOutput$$' -fuzztime $(FUZZTIME_SLOW)

clean:
	rm -rf bin
