// Package recentload is the recent lists' load that recentbench and
// costbench both run: the values added, and the filling of every list to
// its max before the load, so that every Add of the load adds one item and
// drops the oldest.
package recentload

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Value returns the i-th value of worker w: 18 bytes, the same for every
// variant, and never added twice to one variant's lists.
func Value(w int, i int64) string {
	return fmt.Sprintf("item:%03d:%09d", w, i)
}

// Fill makes n calls of call on each of workers workers, every worker at
// once, and returns the errors that ended any worker's calls.
func Fill(ctx context.Context, workers int, n int64, call func(ctx context.Context, w int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if errs[w] = call(ctx, w); errs[w] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
