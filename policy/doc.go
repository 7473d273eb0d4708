// Package policy holds cordon's filesystem policy: five fields, their
// canonical form, and the model that decides every path.
package policy
