package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// countBlankRuns reports how many runs of consecutive blank lines are longer than max.
func countBlankRuns(lines []string, max int) int {
	runs, blank := 0, 0
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			blank++
			if blank = max+1 {
				runs++
			}
			continue
		}
		blank = 0
	}
	return runs
}

func main() {
	var lines []string
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
	}
	if runs := countBlankRuns(lines, 2); runs > 0 {
		fmt.Printf("%d runs of more than 2 blank lines\n", runs)
		os.Exit(1)
	}
	fmt.Println("ok")
}
