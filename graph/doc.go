// Package graph holds everything of stabpriv that uses Gorgonia: the Gorgonia
// expression of every built-in loss (Expr) and the optional Expresser
// interface of a user loss.
package graph
