import FWCore.ParameterSet.Config as cms
process = cms.Process('PHOTONID')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
process.photonTree = cms.EDAnalyzer('PhotonIDTree', photons=cms.InputTag('slimmedPhotons'))
process.p = cms.Path(process.photonTree)
