export DIJET_ENV=1
