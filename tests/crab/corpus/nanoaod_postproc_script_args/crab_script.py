import sys
print("nanoAOD-tools post-processing, job", sys.argv[1], "with", " ".join(sys.argv[2:]))
for name in ("tree.root", "hist.root"):
    with open(name, "w") as f:
        f.write("job %s\n" % sys.argv[1])
