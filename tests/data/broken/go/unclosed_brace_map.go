package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

var extensions = map[string]string{
	".go":   "Go",
	".py":   "Python",
	".rs":   "Rust",
	".ts":   "TypeScript",
	".java": "Java",

func languageOf(name string) string {
	for ext, lang := range extensions {
		if strings.HasSuffix(name, ext) {
			return lang
		}
	}
	return "other"
}

func main() {
	counts := map[string]int{}
	for _, name := range os.Args[1:] {
		counts[languageOf(name)]++
	}
	langs := make([]string, 0, len(counts))
	for lang := range counts {
		langs = append(langs, lang)
	}
	sort.Strings(langs)
	for _, lang := range langs {
		fmt.Printf("%-12s %d\n", lang, counts[lang])
	}
}
