import FWCore.ParameterSet.Config as cms
from Configuration.Eras.Era_Run2_2018_cff import Run2_2018

process = cms.Process('NANO', Run2_2018)
process.options.numberOfThreads = 4
process.options.numberOfStreams = 0
