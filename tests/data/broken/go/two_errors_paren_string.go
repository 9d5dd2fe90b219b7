package main

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
)

func readAmounts(path string, column int) ([]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close(
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	var amounts []float64
	for i, record := range records {
		if i == 0 || column >= len(record) {
			continue
		}
		if v, err := strconv.ParseFloat(record[column], 64); err == nil {
			amounts = append(amounts, v)
		}
	}
	return amounts, nil
}

func main() {
	amounts, err := readAmounts("ledger.csv", 2)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:, err)
		os.Exit(1)
	}
	total := 0.0
	for _, a := range amounts {
		total += a
	}
	fmt.Printf("%d rows, total %.2f\n", len(amounts), total)
}
