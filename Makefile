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
# staticcheck, pinned and fetched by `go run`: a fresh machine needs nothing else.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build demo test lint vet staticcheck fmt-check bench fuzz clean compare

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
	@echo '$$ mimoplan validate testdata/demo/broken.yaml   # a layout with mistakes: exit 1'
	@./$(BIN) validate testdata/demo/broken.yaml; echo "exit code $$?"

test: fmt-check lint
	$(GO) test -count=1 ./...

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
	$(GO) test -run '^$$' -bench . -benchmem ./internal/grid ./internal/render

fuzz:
	$(GO) test ./internal/layout -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/validate -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime $(FUZZTIME)

clean:
	rm -rf bin
