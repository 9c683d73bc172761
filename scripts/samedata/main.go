// Command samedata says whether two json or yaml files hold the same data:
// the same keys in the same order and the same values, whatever the
// whitespace, quoting or flow style. scripts/compare-outputs.sh compares
// render --rank's json and yaml with it.
//
// Usage: go run ./scripts/samedata json|yaml A B
//
// Exit status 0: the same data; 1: different (the first difference is
// printed); 2: usage, or a file that does not parse.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"go.yaml.in/yaml/v3"
)

func main() {
	if len(os.Args) != 4 || os.Args[1] != "json" && os.Args[1] != "yaml" {
		fmt.Fprintln(os.Stderr, "usage: samedata json|yaml A B")
		os.Exit(2)
	}
	var data [2]any
	for i, path := range os.Args[2:] {
		b, err := os.ReadFile(path)
		if err == nil {
			if os.Args[1] == "json" {
				data[i], err = jsonData(b)
			} else {
				data[i], err = yamlData(b)
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "samedata: %s: %v\n", path, err)
			os.Exit(2)
		}
	}
	if where, same := compare(data[0], data[1], "$"); !same {
		fmt.Printf("samedata: %s and %s differ at %s\n", os.Args[2], os.Args[3], where)
		os.Exit(1)
	}
}

// pair is one key and value of a mapping; a mapping is a []pair, so that
// its order counts.
type pair struct {
	key   string
	value any
}

// jsonData reads every value of b (json.Decoder, one token at a time),
// numbers as written.
func jsonData(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var values []any
	for {
		v, err := jsonValue(dec)
		if errors.Is(err, io.EOF) {
			return values, nil
		}
		if err != nil {
			return nil, err
		}
		values = append(values, v)
	}
}

func jsonValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		m := []pair{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := jsonValue(dec)
			if err != nil {
				return nil, err
			}
			m = append(m, pair{k.(string), v})
		}
		_, err = dec.Token()
		return m, err
	case json.Delim('['):
		l := []any{}
		for dec.More() {
			v, err := jsonValue(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err = dec.Token()
		return l, err
	case nil:
		return nil, nil
	}
	if n, ok := tok.(json.Number); ok {
		return n.String(), nil
	}
	return tok, nil
}

// yamlData reads every document of b, scalars decoded as yaml.v3 does
// (1 and "1" differ; "a" and a do not).
func yamlData(b []byte) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []any
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		v, err := yamlValue(&n)
		if err != nil {
			return nil, err
		}
		docs = append(docs, v)
	}
}

func yamlValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlValue(n.Content[0])
	case yaml.MappingNode:
		m := []pair{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := yamlValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m = append(m, pair{n.Content[i].Value, v})
		}
		return m, nil
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			v, err := yamlValue(c)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		return l, nil
	case yaml.AliasNode:
		return yamlValue(n.Alias)
	}
	var v any
	err := n.Decode(&v)
	return v, err
}

// compare walks a and b and says where they first differ.
func compare(a, b any, at string) (string, bool) {
	switch a := a.(type) {
	case []pair:
		b, ok := b.([]pair)
		if !ok || len(a) != len(b) {
			return at, false
		}
		for i := range a {
			if a[i].key != b[i].key {
				return fmt.Sprintf("%s (key %d: %q, %q)", at, i, a[i].key, b[i].key), false
			}
			if where, same := compare(a[i].value, b[i].value, at+"."+a[i].key); !same {
				return where, false
			}
		}
		return "", true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return at, false
		}
		for i := range a {
			if where, same := compare(a[i], b[i], fmt.Sprintf("%s[%d]", at, i)); !same {
				return where, false
			}
		}
		return "", true
	}
	if !reflect.DeepEqual(a, b) {
		return fmt.Sprintf("%s (%v, %v)", at, a, b), false
	}
	return "", true
}
