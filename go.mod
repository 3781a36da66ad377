module github.com/ptkit/ptk

go 1.26.0
