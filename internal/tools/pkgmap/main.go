// Command pkgmap writes the package map of the repository's README.md from
// the packages themselves: one row per directory of Go code, with what its
// package doc comment says it is (Head) and the packages of this
// repository it imports (test files left out). The map sits between two marker lines
// in README.md; TestREADMEMatches fails when it differs from what the doc
// comments say, so a package's doc comment is where its line is edited.
//
//	go run ./internal/tools/pkgmap        print the map
//	go run ./internal/tools/pkgmap -w     rewrite it in README.md
//
// It must not import anything of this repository or outside the standard
// library: it reads sources only (go/parser, imports and comments), so that
// it runs in milliseconds and never needs a build.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	write := flag.Bool("w", false, "rewrite the map in README.md instead of printing it")
	root := flag.String("root", ".", "the repository's root (where go.mod and README.md are)")
	flag.Parse()
	if err := run(*root, *write); err != nil {
		fmt.Fprintln(os.Stderr, "pkgmap:", err)
		os.Exit(1)
	}
}

func run(root string, write bool) error {
	pkgs, err := Scan(root)
	if err != nil {
		return err
	}
	table := Table(pkgs)
	if !write {
		_, err := fmt.Print(table)
		return err
	}
	readme := root + "/README.md"
	b, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	out, err := Replace(string(b), table)
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	return os.WriteFile(readme, []byte(out), 0o644)
}
