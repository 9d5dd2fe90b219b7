package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

const usage = "usage: countdown [-every DURATION] SECONDS

func countdown(total int, every time.Duration, out func(string)) {
	for remaining := total; remaining > 0; remaining-- {
		out(fmt.Sprintf("%d...", remaining))
		time.Sleep(every)
	}
	out("liftoff!")
}

func main() {
	every := flag.Duration("every", time.Second, "time between ticks")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	var seconds int
	if _, err := fmt.Sscan(flag.Arg(0), &seconds); err != nil || seconds < 0 {
		fmt.Fprintln(os.Stderr, "SECONDS must be a non-negative number")
		os.Exit(2)
	}
	countdown(seconds, *every, func(s string) { fmt.Println(s) })
}
