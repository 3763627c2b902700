import FWCore.ParameterSet.Config as cms
process = cms.Process("ZMUMU")
process.source = cms.Source("PoolSource", fileNames=cms.untracked.vstring())
