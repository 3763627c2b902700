import FWCore.ParameterSet.Config as cms
process = cms.Process('FAKE')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
