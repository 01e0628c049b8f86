package main

import (
	"bufio"
	"errors"
	"fmt"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The marker lines around the map in README.md.
const (
	Begin = "<!-- package map: generated from the doc comments by `go run ./internal/tools/pkgmap -w`; do not edit by hand -->"
	End   = "<!-- end of package map -->"
)

// ErrNoMarkers: README.md lacks the Begin or End line (or has them out of order).
var ErrNoMarkers = errors.New("no package map markers")

// Package is one directory of Go code.
type Package struct {
	Dir      string   // slash-separated, relative to the root ("queue", "daemon/api")
	Synopsis string   // what the package is, from its doc comment (see Head); "" when it has none
	Imports  []string // directories of this repository it imports, sorted
}

// Scan reads every directory under root holding non-test Go files (not
// testdata, not hidden, not ones starting with "_"). Imports are of any
// module under root (a nested go.mod's module counts as ours).
func Scan(root string) ([]Package, error) {
	mods := map[string]string{} // module path → its directory relative to root
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case name == "go.mod":
			m, err := modulePath(p)
			if err != nil {
				return err
			}
			mods[m] = rel(root, filepath.Dir(p))
		case strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go"):
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(dirs)
	var pkgs []Package
	for _, dir := range slices.Compact(dirs) {
		p, err := scanDir(root, dir, mods)
		if err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	slices.SortFunc(pkgs, func(a, b Package) int { return strings.Compare(a.Dir, b.Dir) })
	return pkgs, nil
}

func scanDir(root, dir string, mods map[string]string) (Package, error) {
	p := Package{Dir: rel(root, dir)}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return p, err
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return p, err
		}
		if af.Doc != nil && p.Synopsis == "" {
			p.Synopsis = Head(af.Doc.Text())
		}
		for _, imp := range af.Imports {
			ip, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return p, err
			}
			if d, ok := ours(ip, mods); ok && !seen[d] {
				seen[d] = true
				p.Imports = append(p.Imports, d)
			}
		}
	}
	slices.Sort(p.Imports)
	return p, nil
}

// Head is what a doc comment says the package is: its first sentence
// (go/doc's synopsis) without the "Package name " or "Command name " that
// opens it, up to the first colon outside parentheses (what follows a
// colon is detail), without the final period. "Package queue is the
// durable job queue: ..." gives "is the durable job queue".
func Head(comment string) string {
	s := new(doc.Package).Synopsis(comment)
	for _, w := range []string{"Package ", "Command "} {
		if rest, ok := strings.CutPrefix(s, w); ok {
			if _, after, ok := strings.Cut(rest, " "); ok {
				s = after
			}
			break
		}
	}
	if i := topLevelColon(s); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSuffix(strings.TrimSpace(s), ".")
}

func topLevelColon(s string) int {
	depth := 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ':' && depth == 0:
			return i
		}
	}
	return -1
}

// ours is the directory of import path ip when a module under the root
// holds it (the longest module path wins).
func ours(ip string, mods map[string]string) (string, bool) {
	best := ""
	for m := range mods {
		if (ip == m || strings.HasPrefix(ip, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		return "", false
	}
	return path.Join(mods[best], strings.TrimPrefix(strings.TrimPrefix(ip, best), "/")), true
}

func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}

func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	return filepath.ToSlash(r)
}

// Table is the map as Markdown: package, what its doc comment says, and
// what of ours it imports.
func Table(pkgs []Package) string {
	var b strings.Builder
	b.WriteString("| package | what it is (its doc comment) | imports of ours |\n|---|---|---|\n")
	for _, p := range pkgs {
		syn := p.Synopsis
		if syn == "" {
			syn = "(no package doc comment)"
		}
		imps := "none"
		if len(p.Imports) > 0 {
			imps = "`" + strings.Join(p.Imports, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s/` | %s | %s |\n", p.Dir, cell(syn), imps)
	}
	return b.String()
}

func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// Current is the map README text holds between the markers.
func Current(readme string) (string, error) {
	_, table, _, err := split(readme)
	return table, err
}

// Replace puts table between the markers of readme.
func Replace(readme, table string) (string, error) {
	head, _, tail, err := split(readme)
	if err != nil {
		return "", err
	}
	return head + Begin + "\n" + table + End + tail, nil
}

// split cuts readme into what comes before the begin marker, the map
// between the markers, and what follows the end marker.
func split(readme string) (head, table, tail string, err error) {
	head, rest, ok := strings.Cut(readme, Begin+"\n")
	if !ok {
		return "", "", "", ErrNoMarkers
	}
	table, tail, ok = strings.Cut(rest, End)
	if !ok {
		return "", "", "", ErrNoMarkers
	}
	return head, table, tail, nil
}
