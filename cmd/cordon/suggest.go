package main

import (
	"flag"
	"strings"
)

// didYouMean is " (did you mean X?)" for the candidate nearest to word,
// when one is near enough to be a slip (a typo, a transposition, a
// missing or extra letter, or a prefix), else "".
func didYouMean(word string, candidates []string, prefix string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(word, c)
		if strings.HasPrefix(c, word) && len(word) >= 3 {
			d = min(d, 1)
		}
		if best == "" || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	// Two edits in a long word, one in a short one.
	if best == "" || bestD > max(1, min(2, len(word)/4)) {
		return ""
	}
	return " (did you mean " + prefix + best + "?)"
}

// flagNames are the names of fs's flags.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// bytes, each counting one.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
