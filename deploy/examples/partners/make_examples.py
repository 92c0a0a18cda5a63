#!/usr/bin/env python3
"""Writes the example partner files of docs/joining-a-federation.md.

Two organisations with their own ratings (1-5), string ids, their own row
order: a low-rank taste model plus noise, so a model that matches items or
users wrongly does measurably worse. Deterministic (seeded); rerun to
regenerate: python3 make_examples.py
"""
import random

rng = random.Random(20261125)
USERS, ITEMS, DIM = 300, 120, 3
taste = [[rng.gauss(0, 1) for _ in range(DIM)] for _ in range(USERS)]
trait = [[rng.gauss(0, 1) for _ in range(DIM)] for _ in range(ITEMS)]
bias = [rng.gauss(0, 0.5) for _ in range(ITEMS)]


def rating(u, i):
    score = 3.2 + bias[i] + 0.6 * sum(a * b for a, b in zip(taste[u], trait[i]))
    return max(1, min(5, round(score + rng.gauss(0, 0.5))))


def write(path, rows):
    rng.shuffle(rows)
    with open(path, "w") as f:
        f.write("user,item,rating\n")
        for r in rows:
            f.write("%s,%s,%d\n" % r)


sku = ["SKU-%04d" % (1000 + 7 * i) for i in range(ITEMS)]
# HFL: different customers, overlapping but unequal assortments.
bank = [("bank-a/cust-%03d" % u, sku[i], rating(u, i))
        for u in range(150) for i in range(90) if rng.random() < 0.2]
shop = [("shop-b/%d" % (5000 + u), sku[i], rating(u, i))
        for u in range(150, USERS) for i in range(30, ITEMS) if rng.random() < 0.2]
write("bank-a.csv", bank)
write("shop-b.csv", shop)
catalogue = sku[:]
rng.shuffle(catalogue)  # the federation's order, not either partner's
with open("items.txt", "w") as f:
    f.write("".join(s + "\n" for s in catalogue))

# VFL: the same people at both, each with its own items; ~85% overlap.
email = ["member%03d@example.org" % u for u in range(USERS)]
offers = [(email[u], "offer-%d" % i, rating(u, i))
          for u in range(USERS) if rng.random() < 0.85
          for i in range(60) if rng.random() < 0.25]
products = [(email[u], "product-%d" % i, rating(u, i))
            for u in range(USERS) if rng.random() < 0.85
            for i in range(60, ITEMS) if rng.random() < 0.25]
write("bank-a-offers.csv", offers)
write("shop-b-products.csv", products)
