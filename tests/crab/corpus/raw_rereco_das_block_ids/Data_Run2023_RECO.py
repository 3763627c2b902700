# reco step of the 2023 re-RECO (cmsDriver.py step2 ... --era Run3_2023 --data)
import FWCore.ParameterSet.Config as cms

process = cms.Process('RECO')
process.source = cms.Source("PoolSource", fileNames=cms.untracked.vstring('file:RAW.root'))
process.maxEvents = cms.untracked.PSet(input=cms.untracked.int32(-1))
process.RECOoutput = cms.OutputModule("PoolOutputModule", fileName=cms.untracked.string('step2_RAW2DIGI_RECO.root'))
process.RECOoutput_step = cms.EndPath(process.RECOoutput)
