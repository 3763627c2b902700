import FWCore.ParameterSet.Config as cms
process = cms.Process('TRIG')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
