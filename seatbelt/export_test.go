package seatbelt

// SetRuleBudget lets the external tests render an unsplit profile.
func SetRuleBudget(n int) (restore func()) {
	old := ruleBudget
	ruleBudget = n
	return func() { ruleBudget = old }
}
