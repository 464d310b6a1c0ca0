module cclab

go 1.26
