# hadd for NanoAOD trees
print("haddnano")
