"""The pointer-network family (sorting, convex hull, TSP, the board): router, requests, views."""
