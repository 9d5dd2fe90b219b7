package main

import (
	"fmt"
	"strings"
)

type Grid [][]rune

func Parse(text string) Grid {
	var grid Grid
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		grid = append(grid, []rune(line))
	}
	return grid
}

func (g Grid) Print() {
	for _, row := range g {
		fmt.Println(string(row))
}

func (g Grid) Count(r rune) int {
	n := 0
	for _, row := range g {
		n += strings.Count(string(row), string(r))
	}
	return n
}

func main() {
	g := Parse("#..#\n.##.\n#..#")
	g.Print()
	fmt.Println("walls:", g.Count('#'))
}
