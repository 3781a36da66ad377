// Package bench measures ptk's parser beside Ollama's
// (github.com/ollama/ollama/tools), side by side in one run, on the
// replies the README's parser table uses. It is a module of its own so that
// Ollama never becomes a dependency of ptk:
//
//	cd bench && go test -run '^$' -bench . -benchtime 20x -count 6
//	cd bench && go test -run TestPeakHeap -v
package bench
