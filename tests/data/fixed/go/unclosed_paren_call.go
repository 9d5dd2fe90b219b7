package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// Reads lines from stdin and prints the unique ones, joined by commas.
func uniqueLines(scanner *bufio.Scanner) []string {
	seen := make(map[string]bool)
	var parts []string
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		parts = append(parts, line)
	}
	return parts
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	parts := uniqueLines(scanner)
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "read:", err)
		os.Exit(1)
	}
	fmt.Println(strings.Join(parts, ", "))
}
