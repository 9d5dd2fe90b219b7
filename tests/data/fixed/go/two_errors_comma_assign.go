package retry

import (
	"errors"
	"time"
)

type Policy struct {
	Attempts int
	Delay    time.Duration
	Factor   float64
}

var Default = Policy{
	Attempts: 4,
	Delay:    200 * time.Millisecond,
	Factor:   2,
}

var ErrGaveUp = errors.New("retry: gave up")

// Do calls fn until it succeeds or the policy's attempts are used up.
func Do(p Policy, fn func() error) error {
	delay := p.Delay
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if attempt == p.Attempts {
			return errors.Join(ErrGaveUp, err)
		}
		time.Sleep(delay)
		delay = time.Duration(float64(delay) * p.Factor)
	}
}
